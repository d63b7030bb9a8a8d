int unescape(const char *in, char *out)
{
    int n = 0;
    while (*in) {
        char c = *in++;
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        char e = *in;
        if (e == '\0')
            return -1;
        in++;
        switch (e) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case '0': out[n++] = '\0'; break;
        case 'a': out[n++] = '\a'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'v': out[n++] = '\v'; break;
        case '\\': out[n++] = '\\'; break;
        case '"': out[n++] = '"'; break;
        default:
            return -2;
        }
    }
    return n;
}
