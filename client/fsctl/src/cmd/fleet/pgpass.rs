//! The fleet's password from libpq's password file
//! ([`fsindex_proto::pgpass`]), for a tokio-postgres configuration.

use tokio_postgres::config::Host;

/// The password for `config`'s first host, port, database and user.
pub(super) fn lookup(config: &tokio_postgres::Config) -> Option<String> {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => Some(h.as_str()),
        _ => None,
    };
    fsindex_proto::pgpass::lookup(
        host,
        config.get_ports().first().copied(),
        config.get_dbname(),
        config.get_user().unwrap_or_default(),
    )
}
