const char *tristate_name(int v)
{
    switch (v) {
    case -1:
        return "unknown";
    case 0:
        return "false";
    case 1:
        return "true";
    }
    return "invalid";
}
