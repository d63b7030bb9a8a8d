double drag_force(double v, double area)
{
    const double rho = 1.225;
    const double cd = 0.47;
    double f = 0.5 * rho * v * v * cd * area;
    f += 2.5e-3 * v;
    return f;
}
