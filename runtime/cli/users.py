"""``flinkbench users``: the users of one cluster (runtime.users), added and removed by an admin.

    flinkbench users add NAME [--slots N] [--admin] [--out F]
    flinkbench users list
    flinkbench users remove NAME

They talk to the cluster as every job command does (runtime.cli.jobs.target): with the cluster token
(the admin's) or an admin user's. ``add`` prints the new user's token once (the cluster keeps only its
hash), or with ``--out`` writes it to a file only its owner can read, for whoever gives it to the
user (a JupyterHub spawner, a mail).
"""
from __future__ import annotations

from runtime.cli.jobs import client
from runtime.security import write_token_file


def users(args) -> int:
    return {"add": add, "list": list_users, "remove": remove}[args.action](args)


def add(args) -> int:
    added = client(args).post("/users", {"name": args.name, "slots": args.slots, "admin": args.admin})
    quota = f"{added['slots']} slot{'s' * (added['slots'] != 1)}" if added["slots"] is not None else "no slot limit"
    role = ", admin" if added["admin"] else ""
    if args.out_token_file:
        write_token_file(args.out_token_file, added["token"])
        print(f"Added user {added['name']} ({quota}{role}); token written to {args.out_token_file}")
    else:
        print(f"Added user {added['name']} ({quota}{role}). Their token (shown once):")
        print(added["token"])
    return 0


def list_users(args) -> int:
    found = client(args).get("/users")["users"]
    if not found:
        print("No users: the cluster token is the only one ('flinkbench users add NAME' adds one).")
        return 0
    width = max(len(u["name"]) for u in found)
    print(f"{'NAME'.ljust(width)}  SLOTS      ADMIN")
    for user in found:
        slots = str(user["slots"]) if user["slots"] is not None else "no limit"
        print(f"{user['name'].ljust(width)}  {slots.ljust(9)}  {'yes' if user['admin'] else 'no'}")
    return 0


def remove(args) -> int:
    client(args).request("DELETE", f"/users/{args.name}")
    print(f"Removed user {args.name}: their token no longer works (their running jobs run on).")
    return 0
