struct account {
    long balance_cents;
    int transactions;
    int rejected;
};

int account_apply(struct account *acct, char kind, long amount)
{
    switch (kind) {
    case 'D':
        acct->balance_cents += amount;
        break;
    case 'W':
        if (amount > acct->balance_cents) {
            acct->rejected++;
            return 0;
        }
        acct->balance_cents -= amount;
        break;
    case 'F':
        acct->balance_cents -= amount;
        break;
    default:
        acct->rejected++;
        return 0;
    }
    acct->transactions++;
    return 1;
}
