//! What a server may get wrong and still be served: the deviations from the
//! protocol that libmariadb (the library under sysbench and the mariadb
//! client) accepts, so that wirebench accepts them too, and counts them.
//! Where libmariadb refuses, the decoders refuse as well; docs/connecting.md
//! has the table.
//!
//! The decoders report what they tolerated (a [`Frame`](crate::framing::Frame)'s
//! `seq_jumps`, an [`Outcome`](crate::response::Outcome)'s, the login's
//! [`LoginInfo::deviations`](crate::handshake::LoginInfo::deviations)); the
//! caller adds them up in a [`Deviations`] and says each kind once.

/// One kind of departure from the protocol that is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Deviation {
    /// A packet's sequence id did not follow the one before it (the request's,
    /// for an answer's first packet). libmariadb never checks them
    /// (`ma_real_read` takes the server's id and numbers its next packet
    /// after it), so the reader adopts the server's numbering from there.
    /// node-mysql2's server API continues its own counter across commands.
    SequenceRenumbered,
    /// The greeting lacks CLIENT_SECURE_CONNECTION yet carries the 4.1
    /// scramble's second part (libmariadb reads it whenever it is there):
    /// the login uses 4.1 authentication. msql-srv does this.
    NoSecureConnection,
    /// The greeting lacks CLIENT_CONNECT_WITH_DB: the database is selected by
    /// COM_INIT_DB once logged in, as libmariadb's `mysql_real_connect` does.
    NoConnectWithDb,
    /// The greeting lacks CLIENT_TRANSACTIONS (status flags still come with
    /// every OK under PROTOCOL_41, so nothing else changes).
    NoTransactions,
    /// The greeting lacks CLIENT_PLUGIN_AUTH: the login answers as
    /// mysql_native_password without naming a plugin, as libmariadb does.
    NoPluginAuth,
    /// CLIENT_DEPRECATE_EOF was asked for and is not offered: result sets end
    /// with EOF packets.
    NoDeprecateEof,
    /// A result set's column-count packet has bytes after the count (after
    /// the metadata flag under MARIADB_CLIENT_CACHE_METADATA):
    /// libmariadb's `mthd_my_read_query_result` reads the count and ignores
    /// the rest, so the reader does too. Counted per result set.
    ColumnCountTrailing,
}

impl Deviation {
    /// Every kind, in the order reports list them.
    pub const ALL: [Deviation; 7] = [
        Deviation::SequenceRenumbered,
        Deviation::NoSecureConnection,
        Deviation::NoConnectWithDb,
        Deviation::NoTransactions,
        Deviation::NoPluginAuth,
        Deviation::NoDeprecateEof,
        Deviation::ColumnCountTrailing,
    ];

    /// A short name for reports and JSON keys.
    pub fn key(self) -> &'static str {
        match self {
            Deviation::SequenceRenumbered => "sequence_renumbered",
            Deviation::NoSecureConnection => "no_secure_connection",
            Deviation::NoConnectWithDb => "no_connect_with_db",
            Deviation::NoTransactions => "no_transactions",
            Deviation::NoPluginAuth => "no_plugin_auth",
            Deviation::NoDeprecateEof => "no_deprecate_eof",
            Deviation::ColumnCountTrailing => "column_count_trailing",
        }
    }

    /// What the server did and what the client does about it, for the one
    /// warning a run gives about each kind.
    pub fn warning(self) -> &'static str {
        match self {
            Deviation::SequenceRenumbered => {
                "the server numbers its packets from its own counter, not from the request's sequence id \
                 (node-mysql2's server does): accepted as libmariadb does, following the server's numbering"
            }
            Deviation::NoSecureConnection => {
                "the server's greeting does not offer CLIENT_SECURE_CONNECTION but carries a 4.1 scramble \
                 (msql-srv does): accepted as libmariadb does, logging in with 4.1 authentication"
            }
            Deviation::NoConnectWithDb => {
                "the server does not offer CLIENT_CONNECT_WITH_DB: the database is selected with COM_INIT_DB \
                 after the login, as libmariadb does"
            }
            Deviation::NoTransactions => "the server does not offer CLIENT_TRANSACTIONS: accepted as libmariadb does",
            Deviation::NoPluginAuth => {
                "the server does not offer CLIENT_PLUGIN_AUTH: logging in as mysql_native_password, as libmariadb does"
            }
            Deviation::NoDeprecateEof => {
                "the server does not offer CLIENT_DEPRECATE_EOF: result sets end with EOF packets"
            }
            Deviation::ColumnCountTrailing => {
                "the server sends bytes after the column count of a result set: ignored, as libmariadb ignores them"
            }
        }
    }

    /// What one count of it is: a packet, a result set or a login.
    pub fn unit(self) -> &'static str {
        match self {
            Deviation::SequenceRenumbered => "packets",
            Deviation::ColumnCountTrailing => "result sets",
            _ => "logins",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How many times each [`Deviation`] was tolerated: per packet for
/// [`Deviation::SequenceRenumbered`], per result set for
/// [`Deviation::ColumnCountTrailing`], per login for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deviations([u64; Deviation::ALL.len()]);

impl Deviations {
    pub fn add(&mut self, kind: Deviation, n: u64) {
        if let Some(count) = self.0.get_mut(kind.index()) {
            *count = count.saturating_add(n);
        }
    }

    pub fn get(&self, kind: Deviation) -> u64 {
        self.0.get(kind.index()).copied().unwrap_or(0)
    }

    pub fn merge(&mut self, other: &Deviations) {
        for kind in Deviation::ALL {
            self.add(kind, other.get(kind));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&n| n == 0)
    }

    /// The kinds seen, with their counts, in [`Deviation::ALL`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Deviation, u64)> + '_ {
        Deviation::ALL.into_iter().map(|kind| (kind, self.get(kind))).filter(|&(_, n)| n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_merge() {
        let mut a = Deviations::default();
        assert!(a.is_empty());
        a.add(Deviation::SequenceRenumbered, 3);
        let mut b = Deviations::default();
        b.add(Deviation::SequenceRenumbered, 2);
        b.add(Deviation::NoConnectWithDb, 1);
        a.merge(&b);
        assert_eq!(a.iter().collect::<Vec<_>>(), [(Deviation::SequenceRenumbered, 5), (Deviation::NoConnectWithDb, 1)]);
        assert!(Deviation::ALL.iter().all(|d| !d.key().is_empty() && d.warning().contains("server")));
    }
}
