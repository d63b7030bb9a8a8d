struct config {
    int width;
    int height;
    double scale;
    char name[16];
    long flags;
};

long config_score(struct config c)
{
    long s = (long)c.width * c.height;
    s += (long)(c.scale * 1000.0);
    for (int i = 0; i < 16 && c.name[i]; i++)
        s += c.name[i] * (i + 1);
    if (c.flags & 1)
        s = -s;
    return s + (c.flags >> 1);
}
