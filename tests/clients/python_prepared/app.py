"""A small application of the kind a replay brings to another server: it
logs in, reads and writes through server-side prepared statements
(mysql-connector-python's prepared cursor: COM_STMT_PREPARE, then
COM_STMT_EXECUTE with binary parameters), runs a text query, and quits.

    app.py HOST PORT USER PASSWORD DATABASE ROUNDS
"""

import sys

import mysql.connector


def main() -> None:
    host, port, user, password, database, rounds = sys.argv[1:7]
    cnx = mysql.connector.connect(
        host=host, port=int(port), user=user, password=password, database=database,
        ssl_disabled=True,  # a capture of TLS shows nothing
    )
    lookup = cnx.cursor(prepared=True)
    bump = cnx.cursor(prepared=True)
    for n in range(int(rounds)):
        item = n % 10 + 1
        lookup.execute("SELECT id, name, qty FROM replay_items WHERE id = ?", (item,))
        lookup.fetchall()
        bump.execute("UPDATE replay_items SET qty = qty + ? WHERE id = ?", (1, item))
        cnx.commit()
    text = cnx.cursor()
    text.execute("SELECT COUNT(*), SUM(qty) FROM replay_items")
    text.fetchall()
    lookup.close()
    bump.close()
    cnx.close()


if __name__ == "__main__":
    main()
