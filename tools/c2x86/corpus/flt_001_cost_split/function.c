float cost_split(void)
{
    float cost_a = 6.0;
    float cost_b = 0.125;
    float cash = 50.0;
    float num_a = 4.0;
    float num_b;
    float temp;
    temp = cost_a * num_a;
    temp = cash - temp;
    num_b = temp / cost_b;
    return num_b;
}
