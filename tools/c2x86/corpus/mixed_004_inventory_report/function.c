struct item {
    char sku[8];
    int category;
    int quantity;
    int reorder_level;
    double unit_cost;
};

double inventory_value(const struct item *items, int n, int *reorder_count, double *vat)
{
    double total = 0.0;
    int reorder = 0;
    for (int i = 0; i < n; i++) {
        const struct item *it = &items[i];
        double factor;
        switch (it->category) {
        case 0:
            factor = 1.0;
            break;
        case 1:
            factor = 0.95;
            break;
        case 2:
            factor = 0.8;
            break;
        default:
            factor = 0.5;
            break;
        }
        if (it->quantity <= it->reorder_level)
            reorder++;
        if (it->quantity > 0)
            total += it->quantity * it->unit_cost * factor;
    }
    *reorder_count = reorder;
    *vat = total * 0.19;
    return total;
}
