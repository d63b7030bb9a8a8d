int status_weight(int code, int attempts)
{
    int w;
    switch (code) {
    case 200:
        w = 0;
        break;
    case 201:
        w = 1;
        break;
    case 301:
        w = 5;
        break;
    case 404:
        w = 20;
        break;
    case 500:
        w = 50 + attempts * 10;
        break;
    case 503:
        w = 30 + attempts * attempts;
        break;
    default:
        w = code < 0 ? -1 : 99;
        break;
    }
    return w;
}
