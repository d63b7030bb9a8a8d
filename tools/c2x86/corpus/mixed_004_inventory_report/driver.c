#include <stdio.h>

struct item {
    char sku[8];
    int category;
    int quantity;
    int reorder_level;
    double unit_cost;
};

double inventory_value(const struct item *items, int n, int *reorder_count, double *vat);

int main(void)
{
    struct item inv[] = {
        {"A-100", 0, 12, 5, 2.5},
        {"B-200", 1, 3, 10, 19.99},
        {"C-300", 2, 0, 0, 100.0},
        {"D-400", 7, 1000, 100, 0.015},
        {"E-500", 1, -4, 2, 7.25},
    };
    for (int n = 0; n <= 5; n++) {
        int r;
        double vat;
        double v = inventory_value(inv, n, &r, &vat);
        printf("n=%d value=%.6f vat=%.6f reorder=%d\n", n, v, vat, r);
    }
    return 0;
}
