#include <stdio.h>

struct account {
    long balance_cents;
    int transactions;
    int rejected;
};

int account_apply(struct account *acct, char kind, long amount);

int main(void)
{
    struct account a = {1000, 0, 0};
    const char kinds[] = "DWWFXDW";
    long amounts[] = {500, 2000, 1200, 75, 10, 99999, 100000};
    for (int i = 0; i < 7; i++) {
        int ok = account_apply(&a, kinds[i], amounts[i]);
        printf("%c %ld -> %d: balance %ld tx %d rej %d\n", kinds[i], amounts[i], ok, a.balance_cents,
               a.transactions, a.rejected);
    }
    return 0;
}
