double newton_sqrt(double x)
{
    if (x < 0.0)
        return -1.0;
    if (x == 0.0)
        return 0.0;
    double g = x > 1.0 ? x * 0.5 : 1.0;
    for (int i = 0; i < 200; i++) {
        double next = 0.5 * (g + x / g);
        double diff = next - g;
        if (diff < 0.0)
            diff = -diff;
        g = next;
        if (diff <= 1e-12 * g)
            break;
    }
    return g;
}
