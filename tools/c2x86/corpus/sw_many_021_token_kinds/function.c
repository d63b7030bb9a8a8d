int count_token_kinds(const char *src, int counts[6])
{
    int other = 0;
    for (int i = 0; i < 6; i++)
        counts[i] = 0;
    for (; *src; src++) {
        switch (*src) {
        case '(':
        case ')':
            counts[0]++;
            break;
        case '{':
        case '}':
            counts[1]++;
            break;
        case '[':
        case ']':
            counts[2]++;
            break;
        case ';':
            counts[3]++;
            break;
        case ',':
            counts[4]++;
            break;
        case '=':
            counts[5]++;
            break;
        default:
            other++;
        }
    }
    return other;
}
