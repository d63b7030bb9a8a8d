int http_status_family(int status, int *retryable)
{
    *retryable = 0;
    switch (status / 100) {
    case 1:
        return 'I';
    case 2:
        return 'S';
    case 3:
        return 'R';
    case 4:
        if (status == 408 || status == 429)
            *retryable = 1;
        return 'C';
    case 5:
        *retryable = status != 501;
        return 'E';
    default:
        return '?';
    }
}
