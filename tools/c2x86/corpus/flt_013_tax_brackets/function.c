double income_tax(double income)
{
    static const double limits[] = {10000.0, 40000.0, 120000.0};
    static const double rates[] = {0.0, 0.1, 0.22, 0.35, 0.45};
    double tax = 0.0;
    double lower = 0.0;
    int i;
    if (income <= 0.0)
        return 0.0;
    for (i = 0; i < 3 && income > limits[i]; i++) {
        tax += (limits[i] - lower) * rates[i];
        lower = limits[i];
    }
    tax += (income - lower) * rates[i];
    if (income > 250000.0)
        tax += (income - 250000.0) * (rates[4] - rates[3]);
    return tax;
}
