struct rgb {
    unsigned char r, g, b;
};

int to_gray(const struct rgb *px, unsigned char *out, int n)
{
    int bright = 0;
    for (int i = 0; i < n; i++) {
        double y = 0.299 * px[i].r + 0.587 * px[i].g + 0.114 * px[i].b;
        int v = (int)(y + 0.5);
        if (v > 255)
            v = 255;
        out[i] = (unsigned char)v;
        if (v >= 128)
            bright++;
    }
    return bright;
}
