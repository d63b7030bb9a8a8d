double circle_area_plus_perimeter(double r, double *perimeter)
{
    const double pi = 3.14159265358979;
    *perimeter = 2.0 * pi * r;
    return pi * r * r;
}
