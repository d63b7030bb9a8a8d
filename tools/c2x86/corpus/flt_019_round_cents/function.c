double round_cents(double amount)
{
    double scaled = amount * 100.0;
    long c;
    if (scaled >= 0.0)
        c = (long)(scaled + 0.5);
    else
        c = -(long)(-scaled + 0.5);
    return c / 100.0;
}
