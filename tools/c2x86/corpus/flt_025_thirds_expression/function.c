double thirds(double x)
{
    double a = x * (1.0 / 3.0);
    float b = (float)x * (2.0f / 3.0f);
    double c = x - 1.0 / 7.0;
    return a + b + c;
}
