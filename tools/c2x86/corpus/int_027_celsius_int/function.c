int celsius_to_f_rounded(int tenths_c)
{
    int num = tenths_c * 9;
    int q = num / 5;
    int r = num % 5;
    if (r >= 3)
        q += 1;
    else if (r <= -3)
        q -= 1;
    return q + 320;
}
