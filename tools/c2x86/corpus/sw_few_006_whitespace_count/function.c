int count_whitespace(const char *s, int *newlines)
{
    int ws = 0;
    *newlines = 0;
    for (; *s != '\0'; s++) {
        switch (*s) {
        case ' ':
        case '\t':
            ws++;
            break;
        case '\n':
            ws++;
            (*newlines)++;
            break;
        default:
            break;
        }
    }
    return ws;
}
