int most_frequent_char(const char *s, int *count)
{
    int freq[256] = {0};
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        freq[*p]++;
    int best = -1, bc = 0;
    for (int c = 1; c < 256; c++) {
        if (freq[c] > bc) {
            bc = freq[c];
            best = c;
        }
    }
    *count = bc;
    return best;
}
