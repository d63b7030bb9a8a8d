struct ring {
    int head;
    int count;
    int data[5];
};

static int ring_push(struct ring *r, int v)
{
    if (r->count == 5)
        return 0;
    r->data[(r->head + r->count) % 5] = v;
    r->count++;
    return 1;
}

static int ring_pop(struct ring *r, int *v)
{
    if (r->count == 0)
        return 0;
    *v = r->data[r->head];
    r->head = (r->head + 1) % 5;
    r->count--;
    return 1;
}

long ring_run(const int *cmds, int n, int *final_count)
{
    struct ring r = {0, 0, {0}};
    long check = 0;
    for (int i = 0; i < n; i++) {
        if (cmds[i] >= 0) {
            if (!ring_push(&r, cmds[i]))
                check -= 1000;
        } else {
            int v;
            if (ring_pop(&r, &v))
                check = check * 7 + v;
            else
                check -= 1;
        }
    }
    *final_count = r.count;
    return check;
}
