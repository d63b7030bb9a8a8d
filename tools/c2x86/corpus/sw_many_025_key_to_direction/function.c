int key_delta(char key, int *dx, int *dy)
{
    *dx = 0;
    *dy = 0;
    switch (key) {
    case 'h': case 'a': *dx = -1; break;
    case 'l': case 'd': *dx = 1; break;
    case 'k': case 'w': *dy = -1; break;
    case 'j': case 's': *dy = 1; break;
    case 'y': *dx = -1; *dy = -1; break;
    case 'u': *dx = 1; *dy = -1; break;
    case 'b': *dx = -1; *dy = 1; break;
    case 'n': *dx = 1; *dy = 1; break;
    default:
        return 0;
    }
    return 1;
}
