long round_up_multiple(long value, long step)
{
    if (step <= 0)
        return value;
    long r = value % step;
    if (r == 0)
        return value;
    if (r < 0)
        return value - r;
    return value + (step - r);
}
