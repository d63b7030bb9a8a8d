struct clock {
    int days;
    int hours;
    int minutes;
    int seconds;
};

void time_normalize(struct clock *c)
{
    long total = (long)c->days * 86400 + (long)c->hours * 3600 + (long)c->minutes * 60 + c->seconds;
    long d = total / 86400;
    long rem = total % 86400;
    if (rem < 0) {
        rem += 86400;
        d -= 1;
    }
    c->days = (int)d;
    c->hours = (int)(rem / 3600);
    c->minutes = (int)(rem % 3600 / 60);
    c->seconds = (int)(rem % 60);
}
