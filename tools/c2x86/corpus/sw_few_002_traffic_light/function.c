int next_light(int state, int *seconds)
{
    int next;
    switch (state) {
    case 0: /* red */
        next = 2;
        *seconds = 30;
        break;
    case 1: /* yellow */
        next = 0;
        *seconds = 45;
        break;
    case 2: /* green */
        next = 1;
        *seconds = 4;
        break;
    default:
        next = 0;
        *seconds = 45;
        break;
    }
    return next;
}
