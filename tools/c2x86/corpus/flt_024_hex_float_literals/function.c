double hex_literal_mix(double x)
{
    const double a = 0x1.8p3;
    const double b = 0x1p-4;
    const double c = -0x1.4p+1;
    return a * x * x + b * x + c;
}
