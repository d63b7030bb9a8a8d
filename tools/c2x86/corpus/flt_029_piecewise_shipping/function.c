double shipping_cost(double kg, int express)
{
    double cost;
    if (kg <= 0.0)
        return 0.0;
    if (kg <= 1.0)
        cost = 4.99;
    else if (kg <= 10.0)
        cost = 4.99 + (kg - 1.0) * 1.75;
    else
        cost = 4.99 + 9.0 * 1.75 + (kg - 10.0) * 0.85;
    if (express)
        cost = cost * 1.5 + 7.5;
    return cost * (1.0 + 0.035);
}
