#include <stdio.h>

struct tnode {
    int value;
    int left;
    int right;
};

int tree_height(const struct tnode *nodes, int root, long *sum);

int main(void)
{
    struct tnode t[] = {
        {10, 1, 2}, {5, 3, -1}, {20, 4, 5}, {1, -1, 6}, {15, -1, -1}, {30, -1, -1}, {2, 7, -1}, {3, -1, -1},
    };
    int roots[] = {0, 1, 2, 5, -1, 3};
    for (int i = 0; i < 6; i++) {
        long s;
        int h = tree_height(t, roots[i], &s);
        printf("root %d: height %d sum %ld\n", roots[i], h, s);
    }
    return 0;
}
