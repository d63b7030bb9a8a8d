void caesar_shift(char *s, int shift)
{
    int k = shift % 26;
    if (k < 0)
        k += 26;
    for (; *s; s++) {
        if (*s >= 'a' && *s <= 'z')
            *s = (char)('a' + (*s - 'a' + k) % 26);
        else if (*s >= 'A' && *s <= 'Z')
            *s = (char)('A' + (*s - 'A' + k) % 26);
    }
}
