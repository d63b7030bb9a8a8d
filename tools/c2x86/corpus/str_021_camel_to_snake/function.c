int camel_to_snake(const char *in, char *out, int cap)
{
    int n = 0;
    for (int i = 0; in[i]; i++) {
        char c = in[i];
        int upper = c >= 'A' && c <= 'Z';
        if (upper && i > 0 && in[i - 1] != '_') {
            if (n + 1 >= cap)
                return -1;
            out[n++] = '_';
        }
        if (n + 1 >= cap)
            return -1;
        out[n++] = upper ? (char)(c + 32) : c;
    }
    out[n] = '\0';
    return n;
}
