struct shape {
    int kind;
    double a;
    double b;
};

double shape_area(const struct shape *s)
{
    switch (s->kind) {
    case 1:
        return 3.14159 * s->a * s->a;
    case 2:
        return s->a * s->b;
    case 3:
        return 0.5 * s->a * s->b;
    default:
        return 0.0;
    }
}
