//! The fleet's database URL with libpq's TLS settings, for the daemon's
//! fleet link and `fsctl fleet` alike.
//!
//! tokio-postgres knows `sslmode=disable|prefer|require` and no more: it
//! neither verifies a certificate itself (that is the connector's job) nor
//! accepts `verify-ca`, `verify-full` or `sslrootcert`. Managed PostgreSQL
//! services document exactly those (`sslmode=verify-full&sslrootcert=...`),
//! so they are taken out of the URL here and turned into a native-tls
//! connector (OpenSSL on Linux, the platform's own stack elsewhere) that
//! checks what libpq checks:
//!
//! | sslmode | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | |
//! | `allow`, `prefer` (default) | when the server offers it | not checked |
//! | `require` | always | not checked; with `sslrootcert`, its chain (as libpq does) |
//! | `verify-ca` | always | signed by a CA of `sslrootcert` |
//! | `verify-full` | always | that, and issued for the host named in the URL |
//!
//! `sslrootcert` is a PEM file of one or more CA certificates, used alone
//! (the system's CAs are not consulted), or `system` for the system's
//! store; unset, libpq's `~/.postgresql/root.crt` where it exists, else a
//! mode that verifies is refused with a message that says what to give.
//! Client certificates (`sslcert`, `sslkey`) are refused by name, never
//! ignored.
//!
//! The connector itself is built on first use, once a server has said yes
//! to TLS: building one loads the system's CA bundle (OpenSSL reads and
//! parses every certificate of it, about 25 ms of CPU, even where the
//! mode checks nothing), which a one-shot `fsctl fleet search` against a
//! server without TLS would pay for nothing. `sslrootcert` is read when
//! the URL is parsed, so a missing or unreadable file is still an error
//! before any connection.

use std::error::Error;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::config::SslMode;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};

/// A connector that speaks TLS as the URL's `sslmode` asks, built the
/// first time a server accepts TLS and shared by every connection after.
#[derive(Clone)]
pub struct Tls(Arc<LazyTls>);

struct LazyTls {
    mode: Mode,
    /// `sslrootcert`'s certificates, read when the URL was parsed.
    certs: Vec<native_tls::Certificate>,
    built: OnceLock<Result<native_tls::TlsConnector, String>>,
}

impl LazyTls {
    fn connector(&self) -> Result<native_tls::TlsConnector, String> {
        self.built
            .get_or_init(|| connector(&self.mode, &self.certs))
            .clone()
    }
}

impl<S> MakeTlsConnect<S> for Tls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = postgres_native_tls::TlsStream<S>;
    type TlsConnect = Connect;
    type Error = Box<dyn Error + Send + Sync>;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Connect, Self::Error> {
        Ok(Connect {
            tls: self.0.clone(),
            domain: domain.to_owned(),
        })
    }
}

/// One connection's TLS handshake, to `domain`.
pub struct Connect {
    tls: Arc<LazyTls>,
    domain: String,
}

impl<S> TlsConnect<S> for Connect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = postgres_native_tls::TlsStream<S>;
    type Error = Box<dyn Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Stream, Self::Error>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        match self.tls.connector() {
            Ok(c) => {
                let handshake =
                    postgres_native_tls::TlsConnector::new(c, &self.domain).connect(stream);
                Box::pin(async move { handshake.await.map_err(Into::into) })
            }
            Err(e) => Box::pin(std::future::ready(Err(e.into()))),
        }
    }
}

/// What the URL's TLS settings were, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

/// The CAs a verifying mode trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// None given (and no `~/.postgresql/root.crt`).
    None,
    /// `sslrootcert=system`.
    System,
    File(PathBuf),
}

/// A fleet database: the configuration tokio-postgres connects with, and
/// the TLS connector to pass it.
#[derive(Clone)]
pub struct Database {
    pub config: tokio_postgres::Config,
    pub tls: Tls,
    pub mode: Mode,
    pub roots: Roots,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("mode", &self.mode)
            .field("roots", &self.roots)
            .finish()
    }
}

impl Database {
    /// Parses a `postgresql://` URL or a `key=value` connection string.
    /// Errors are one line, for `status` and fsctl.
    pub fn parse(url: &str) -> Result<Database, String> {
        let (rest, ssl) = take_ssl_params(url)?;
        let mut config: tokio_postgres::Config = rest
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        let mode = match ssl.mode.as_deref() {
            None | Some("prefer") | Some("allow") => Mode::Prefer,
            Some("disable") => Mode::Disable,
            Some("require") => Mode::Require,
            Some("verify-ca") => Mode::VerifyCa,
            Some("verify-full") => Mode::VerifyFull,
            Some(other) => {
                return Err(format!(
                    "sslmode={other}: not a mode (disable, allow, prefer, require, verify-ca, verify-full)"
                ));
            }
        };
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            _ => SslMode::Require,
        });
        let roots = match ssl.rootcert.as_deref() {
            Some("system") => Roots::System,
            Some("") => return Err("sslrootcert: empty".into()),
            Some(f) => Roots::File(PathBuf::from(f)),
            None => default_root_file().map_or(Roots::None, Roots::File),
        };
        if matches!(mode, Mode::VerifyCa | Mode::VerifyFull) && roots == Roots::None {
            return Err(format!(
                "sslmode={}: no CA to check the server's certificate against: add \
                 sslrootcert=FILE (the CA's PEM file) or sslrootcert=system to the URL",
                mode.as_str()
            ));
        }
        let certs = match &roots {
            Roots::File(f) if verifies_chain(&mode, &roots) => read_certificates(f)?,
            _ => Vec::new(),
        };
        Ok(Database {
            config,
            tls: Tls(Arc::new(LazyTls {
                mode: mode.clone(),
                certs,
                built: OnceLock::new(),
            })),
            mode,
            roots,
        })
    }

    /// `msg`, a connection's failure, with the TLS settings that bear on
    /// it when it is about TLS.
    pub fn explain(&self, msg: String) -> String {
        if !msg.contains("TLS") && !msg.contains("SSL") && !msg.contains("certificate") {
            return msg;
        }
        let roots = match &self.roots {
            Roots::File(f) => format!(", sslrootcert={}", f.display()),
            Roots::System => ", sslrootcert=system".into(),
            Roots::None => String::new(),
        };
        format!("{msg} (sslmode={}{roots})", self.mode.as_str())
    }
}

/// libpq's default CA file, `~/.postgresql/root.crt`, where it exists.
fn default_root_file() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let f = Path::new(&home).join(".postgresql/root.crt");
    f.is_file().then_some(f)
}

/// Whether the server's certificate chain is checked: libpq checks it in
/// `require` too once `sslrootcert` names a file.
fn verifies_chain(mode: &Mode, roots: &Roots) -> bool {
    match mode {
        Mode::Disable | Mode::Prefer => false,
        Mode::Require => matches!(roots, Roots::File(_)),
        Mode::VerifyCa | Mode::VerifyFull => true,
    }
}

/// The native-tls connector for `mode`; `certs` (the file's CAs, empty
/// where the mode checks no chain or trusts the system's store) are the
/// only CAs trusted when given.
fn connector(
    mode: &Mode,
    certs: &[native_tls::Certificate],
) -> Result<native_tls::TlsConnector, String> {
    let mut b = native_tls::TlsConnector::builder();
    let verify_chain = matches!(mode, Mode::VerifyCa | Mode::VerifyFull) || !certs.is_empty();
    if !verify_chain {
        b.danger_accept_invalid_certs(true);
    }
    if *mode != Mode::VerifyFull {
        b.danger_accept_invalid_hostnames(true);
    }
    if !certs.is_empty() {
        b.disable_built_in_roots(true);
        for c in certs {
            b.add_root_certificate(c.clone());
        }
    }
    b.build()
        .map_err(|e| format!("cannot set up TLS for the fleet database: {e}"))
}

/// Every certificate of a PEM file (a managed service's bundle holds
/// dozens; native-tls reads one PEM block at a time).
fn read_certificates(f: &Path) -> Result<Vec<native_tls::Certificate>, String> {
    let text = std::fs::read(f).map_err(|e| format!("sslrootcert {}: {e}", f.display()))?;
    let text = String::from_utf8_lossy(&text);
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut out = Vec::new();
    let mut rest = text.as_ref();
    while let Some(start) = rest.find(BEGIN) {
        let Some(len) = rest[start..].find(END) else {
            break;
        };
        let block = &rest[start..start + len + END.len()];
        let cert = native_tls::Certificate::from_pem(block.as_bytes())
            .map_err(|e| format!("sslrootcert {}: {e}", f.display()))?;
        out.push(cert);
        rest = &rest[start + len + END.len()..];
    }
    if out.is_empty() {
        return Err(format!(
            "sslrootcert {}: no PEM certificate in it",
            f.display()
        ));
    }
    Ok(out)
}

/// The TLS settings a URL gave, taken out of it.
#[derive(Debug, Default, PartialEq, Eq)]
struct SslParams {
    mode: Option<String>,
    rootcert: Option<String>,
}

/// Takes `sslmode` and `sslrootcert` out of a URL's query or a `key=value`
/// string, leaving the rest for tokio-postgres; refuses the TLS settings
/// this link does not implement by name.
fn take_ssl_params(url: &str) -> Result<(String, SslParams), String> {
    let mut ssl = SslParams::default();
    let mut keep = |key: &str, value: String| -> Result<bool, String> {
        match key {
            "sslmode" => ssl.mode = Some(value),
            "sslrootcert" => ssl.rootcert = Some(value),
            "sslcert"
            | "sslkey"
            | "sslpassword"
            | "sslcrl"
            | "sslcrldir"
            | "sslsni"
            | "sslcompression"
            | "ssl_min_protocol_version"
            | "ssl_max_protocol_version" => {
                return Err(format!(
                    "{key}: not supported by the fleet link (only sslmode and sslrootcert are)"
                ));
            }
            _ => return Ok(true),
        }
        Ok(false)
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_owned(), ssl));
        };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if keep(&percent_decode(k)?, percent_decode(v)?)? {
                kept.push(pair);
            }
        }
        let rest = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return Ok((rest, ssl));
    }
    // key=value pairs: values bare or in single quotes with \ escapes.
    let mut kept = Vec::new();
    let mut chars = url.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            // Not ours to judge: tokio-postgres says what is wrong.
            return Ok((url.to_owned(), SslParams::default()));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Ok((url.to_owned(), SslParams::default())),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        if keep(&key, value.clone())? {
            let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
            kept.push(format!("{key}='{quoted}'"));
        }
    }
    Ok((kept.join(" "), ssl))
}

fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad %-escape in {s:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{s:?} is not UTF-8 once decoded"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(url: &str) -> (String, SslParams) {
        take_ssl_params(url).unwrap()
    }

    #[test]
    fn takes_the_tls_settings_out_of_a_url() {
        let (rest, ssl) = params(
            "postgresql://me@db:5432/fleet?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca%20b.pem",
        );
        assert_eq!(rest, "postgresql://me@db:5432/fleet?application_name=x");
        assert_eq!(ssl.mode.as_deref(), Some("verify-full"));
        assert_eq!(ssl.rootcert.as_deref(), Some("/tmp/ca b.pem"));
        let (rest, ssl) = params("postgresql://db/fleet?sslmode=require");
        assert_eq!(rest, "postgresql://db/fleet");
        assert_eq!(ssl.mode.as_deref(), Some("require"));
        assert_eq!(params("postgres://db").0, "postgres://db");
    }

    #[test]
    fn takes_the_tls_settings_out_of_key_value_pairs() {
        let (rest, ssl) = params(
            "host=db user = me sslmode=verify-ca sslrootcert='/a b/c\\'s.pem' password='x y'",
        );
        assert_eq!(rest, "host='db' user='me' password='x y'");
        assert_eq!(ssl.mode.as_deref(), Some("verify-ca"));
        assert_eq!(ssl.rootcert.as_deref(), Some("/a b/c's.pem"));
        let c: tokio_postgres::Config = rest.parse().unwrap();
        assert_eq!(c.get_password(), Some(&b"x y"[..]));
    }

    #[test]
    fn refuses_what_it_does_not_do_by_name() {
        let e =
            Database::parse("postgresql://db/x?sslmode=verify-full&sslcert=/c.pem").unwrap_err();
        assert!(e.contains("sslcert"), "{e}");
        let e = Database::parse("postgresql://db/x?sslmode=strict").unwrap_err();
        assert!(e.contains("sslmode=strict"), "{e}");
        let e =
            Database::parse("postgresql://db/x?sslrootcert=/nonexistent.pem&sslmode=verify-full")
                .unwrap_err();
        assert!(e.contains("/nonexistent.pem"), "{e}");
        let e = Database::parse("mysql://db/x").unwrap_err();
        assert!(e.contains("not a PostgreSQL URL"), "{e}");
    }

    #[test]
    fn modes_map_to_tokio_postgres() {
        let d = Database::parse("postgresql://db/x").unwrap();
        assert_eq!(d.mode, Mode::Prefer);
        assert_eq!(d.config.get_ssl_mode(), SslMode::Prefer);
        let d = Database::parse("postgresql://db/x?sslmode=disable").unwrap();
        assert_eq!(d.config.get_ssl_mode(), SslMode::Disable);
        let d =
            Database::parse("postgresql://db/x?sslmode=verify-full&sslrootcert=system").unwrap();
        assert_eq!(d.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(d.roots, Roots::System);
    }
}
