double gravity_force(double m1, double m2, double distance_km)
{
    const double G = 6.674e-11;
    double r = distance_km * 1e3;
    if (r <= 0.0)
        return 0.0;
    return G * m1 * m2 / (r * r);
}
