int bmi_class(double kg, double cm, double *bmi_out)
{
    double m = cm / 100.0;
    double bmi = kg / (m * m);
    *bmi_out = bmi;
    if (bmi < 18.5)
        return 0;
    if (bmi < 25.0)
        return 1;
    if (bmi < 30.0)
        return 2;
    return 3;
}
