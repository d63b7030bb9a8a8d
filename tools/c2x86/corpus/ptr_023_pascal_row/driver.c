#include <stdio.h>

int pascal_row(unsigned long long *row, int n);

int main(void)
{
    unsigned long long row[70];
    int ns[] = {0, 1, 4, 10, 64};
    for (int k = 0; k < 5; k++) {
        int m = pascal_row(row, ns[k]);
        printf("n=%d:", ns[k]);
        for (int i = 0; i < m; i += (m > 12 ? 8 : 1))
            printf(" %llu", row[i]);
        printf("\n");
    }
    printf("%d\n", pascal_row(row, -1));
    return 0;
}
