#!/usr/bin/env python3
"""Deterministic benchmark data for Coffer, as a Coffer JSON export (Specs/cli.md).

    scripts/bench-data.py RECORDS SEED OUT.json

The same RECORDS and SEED always give the same bytes. The mix follows a household over ten
years: 50 accounts (40 assets, 10 liabilities) whose values are updated over the decade
(20% of the records), invoices to 50 clients (3%), and budget transactions (the rest) across
the 18 default categories, 3 income sources and 3 savings goals. The file is loaded with
`coffer import json`, Coffer's own bulk path, in one transaction.

Record ids are the ones Coffer would have issued had the household entered the records as they
happened (FinanceCore's RecordIDs, Specs/record-payloads.md "Record ids"): one process a day
(that day's session or statement import, some time in the evening) issues the ids of the
records dated that day, a few milliseconds apart, each id the millisecond, a counter, and that
process's 62 random bits; the setup records come from the first day's process.
"""
import datetime
import json
import random
import sys
import uuid

CATEGORIES = {
    "needs": ["Rent/Mortgage", "Groceries", "Utilities", "Insurance", "Transport", "Healthcare"],
    "wants": ["Dining Out", "Entertainment", "Shopping", "Subscriptions", "Personal Care", "Hobbies"],
    "savings": ["Emergency Fund", "Retirement", "Vacation", "Large Purchase", "Education", "Investments"],
}
ASSET_CATEGORIES = ["Cash", "Savings", "Investments", "Pensions", "Property", "Crypto", "Vehicles"]
LIABILITY_CATEGORIES = ["Mortgage", "Loans", "Credit Cards"]
MERCHANTS = ["TESCO STORES", "SAINSBURYS", "PRET A MANGER", "TFL TRAVEL", "NETFLIX.COM", "AMAZON MKTP", "SHELL", "BOOTS",
             "JOHN LEWIS", "DELIVEROO", "SPOTIFY", "THAMES WATER", "OCTOPUS ENERGY", "AVIVA", "CINEWORLD", "WAITROSE"]


def money(minor):
    sign = "-" if minor < 0 else ""
    minor = abs(minor)
    return f"{sign}{minor // 100}.{minor % 100:02d}"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    total, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    processes = random.Random(seed + 1)   # ids only: every other value is drawn as before
    days = {}                             # day offset → [millisecond, counter, random bits] of its process

    def ids(offset=0):
        rng.getrandbits(128)              # the draw a random id took, so the rest of the data is unchanged
        if offset not in days:
            evening = datetime.datetime.combine(start + datetime.timedelta(days=offset), datetime.time(19),
                                                tzinfo=datetime.timezone.utc)
            days[offset] = [int(evening.timestamp() * 1000) + processes.randint(0, 3 * 3_600_000), -1,
                            processes.getrandbits(62)]
        state = days[offset]
        step = processes.randint(0, 40)
        if step or state[1] == 0xFFF:
            state[0], state[1] = state[0] + max(step, 1), 0
        else:
            state[1] += 1
        return str(uuid.UUID(int=state[0] << 80 | 0x8 << 76 | state[1] << 64 | 0b10 << 62 | state[2]))
    end = datetime.date(2026, 11, 22)
    start = end - datetime.timedelta(days=3652)
    day = lambda offset: (start + datetime.timedelta(days=offset)).isoformat()

    accounts = []
    for index in range(50):
        liability = index >= 40
        accounts.append({
            "id": ids(), "name": f"{'Loan' if liability else 'Account'} {index + 1:02d}",
            "category": rng.choice(LIABILITY_CATEGORIES if liability else ASSET_CATEGORIES),
            "kind": "liability" if liability else "asset", "created": day(0),
            **({"growth": f"{rng.randint(0, 700) / 100}%"} if rng.random() < 0.5 else {}),
        })
    update_count = total * 20 // 100
    invoice_count = total * 3 // 100
    fixed = 50 + 18 + 3 + 3 + 50
    transaction_count = max(0, total - fixed - update_count - invoice_count)

    # Value updates: each account's value walks over the decade, in date order.
    values = [rng.randint(1_000_00, 200_000_00) for _ in accounts]
    updates = []
    for sequence in range(update_count):
        offset = sequence * 3652 // max(1, update_count)
        account = sequence % len(accounts)
        values[account] = max(0, values[account] + rng.randint(-2_000_00, 2_500_00))
        updates.append({"id": ids(offset), "account": accounts[account]["id"], "date": day(offset),
                        "amount": money(values[account]), "sequence": sequence + 1})

    categories = []
    for type_name, names in CATEGORIES.items():
        for order, name in enumerate(names):
            categories.append({"id": ids(), "name": name, "type": type_name, "sortOrder": order, "isDefault": True, "hidden": False})
    sources = [{"id": ids(), "name": name, "amount": amount, "frequency": "monthly"}
               for name, amount in [("Salary", "3200.00"), ("Freelance", "800.00"), ("Rent income", "950.00")]]
    goals = [{"id": ids(), "name": name, "target": target} for name, target in
             [("House deposit", "40000.00"), ("Emergency fund", "10000.00"), ("Holiday", "3000.00")]]

    transactions = []
    for sequence in range(transaction_count):
        offset = sequence * 3652 // max(1, transaction_count)
        roll = rng.random()
        if roll < 0.08:
            kind, target = "income", {"kind": "source", "id": rng.choice(sources)["id"]}
            amount = rng.randint(500_00, 3_500_00)
        elif roll < 0.10:
            kind, target = "savings", {"kind": "goal", "id": rng.choice(goals)["id"]}
            amount = rng.randint(50_00, 800_00)
        else:
            category = rng.choice(categories)
            kind = "savings" if category["type"] == "savings" else "expense"
            target = {"kind": "category", "id": category["id"]}
            amount = rng.randint(1_00, 250_00)
        entry = {"id": ids(offset), "amount": money(amount), "type": kind, "target": target, "date": day(offset), "sequence": sequence + 1}
        if rng.random() < 0.6:
            entry["note"] = f"{rng.choice(MERCHANTS)} {rng.randint(1000, 9999)}"
        transactions.append(entry)

    clients = [{"id": ids(), "name": f"Client {index + 1:02d} Ltd", "terms": rng.choice([14, 30])} for index in range(50)]
    invoices = []
    for number in range(1, invoice_count + 1):
        issued = number * 3652 // max(1, invoice_count + 1)
        terms = rng.choice([14, 30])
        items = [{"description": f"Work package {rng.randint(1, 99)}", "quantity": str(rng.choice([1, 2, 2.5, 8, 10])),
                  "unitPrice": money(rng.randint(50_00, 900_00))} for _ in range(rng.randint(1, 3))]
        invoice = {"id": ids(issued), "number": number, "client": rng.choice(clients)["id"], "items": items, "issued": day(issued),
                   "due": day(issued + terms), "payments": []}
        roll = rng.random()
        if roll < 0.02 or issued > 3640:
            invoice["status"] = "draft"
        elif roll < 0.05:
            invoice.update(status="void", sentOn=day(issued), voidedOn=day(min(3651, issued + 5)))
        else:
            invoice.update(status="sent", sentOn=day(issued))
            if roll < 0.93:
                # Paid in full: the items' total, computed as Coffer does (half away from zero).
                subtotal = 0
                for item in items:
                    quantity_thousandths = round(float(item["quantity"]) * 1000)
                    price = round(float(item["unitPrice"]) * 100)
                    product = quantity_thousandths * price
                    subtotal += (product + 500) // 1000
                invoice["payments"] = [{"date": day(min(3651, issued + rng.randint(1, terms))), "amount": money(subtotal)}]
        invoices.append(invoice)

    document = {
        "format": "coffer-export", "version": 2, "currency": "GBP", "includeReceivables": True,
        "accounts": accounts, "updates": updates, "categoryRates": [], "budgetCategories": categories,
        "incomeSources": sources, "transactions": transactions, "goals": goals, "clients": clients,
        "invoices": invoices, "invoiceCounter": invoice_count,
    }
    with open(out, "w") as handle:
        json.dump(document, handle, separators=(",", ":"))
    records = len(accounts) + len(updates) + len(categories) + len(sources) + len(transactions) + len(goals) + len(clients) + len(invoices)
    print(f"{out}: {records} records ({len(updates)} updates, {len(transactions)} transactions, {len(invoices)} invoices)")


if __name__ == "__main__":
    main()
