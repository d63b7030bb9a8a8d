float kelvin_to_f(float k)
{
    if (k < 0.0f)
        k = 0.0f;
    return (k - 273.15f) * 1.8f + 32.0f;
}
