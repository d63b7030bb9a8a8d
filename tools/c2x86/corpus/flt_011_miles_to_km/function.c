double trip_km(const double *miles, int n)
{
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += miles[i] * 1.609344;
    long metres = (long)(total * 1000.0 + 0.5);
    return metres / 1000.0;
}
