double savings_after(double start, int years)
{
    double balance = start;
    for (int y = 0; y < years; y++) {
        balance = balance * 1.035 + 1200.0;
    }
    return balance;
}
