struct tnode {
    int value;
    int left;
    int right;
};

static int height(const struct tnode *t, int i, long *sum)
{
    if (i < 0)
        return 0;
    *sum += t[i].value;
    int hl = height(t, t[i].left, sum);
    int hr = height(t, t[i].right, sum);
    return 1 + (hl > hr ? hl : hr);
}

int tree_height(const struct tnode *nodes, int root, long *sum)
{
    *sum = 0;
    return height(nodes, root, sum);
}
