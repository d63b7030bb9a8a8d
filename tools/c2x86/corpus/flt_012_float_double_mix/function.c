double float_double_mix(int k)
{
    float f = 0.1f;
    double d = 0.1;
    double a = f * 3.0;
    double b = d * 3.0;
    float c = (float)k * 0.3f;
    return (a - b) * 1e9 + c + (double)(f + 0.2f);
}
