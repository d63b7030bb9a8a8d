double unit_factor(int unit, double amount)
{
    double f;
    switch (unit) {
    case 0:
        f = 0.0254;
        break;
    case 1:
        f = 0.3048;
        break;
    case 2:
        f = 0.9144;
        break;
    case 3:
        f = 1609.344;
        break;
    default:
        f = 1.0;
    }
    return amount * f;
}
