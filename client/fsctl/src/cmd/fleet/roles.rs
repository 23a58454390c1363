//! `fsctl fleet grant|revoke|roles`: who sees what in the fleet. A
//! database role is mapped to a user of a host (`fsindex.role_map`: the
//! user's uid and groups there), and row-level security then shows that
//! role what the user could see on that host, as the daemon's machine-wide
//! mode does (`migrations/fleet/0002_visibility.sql`); or a role is made an
//! admin (`fsindex.admins`), which sees and may write every row: the
//! daemons' own roles, and whoever runs the fleet. The roles themselves are
//! the database's (`CREATE ROLE alice LOGIN PASSWORD ...`): these commands
//! map and grant, they never create or drop one.

use std::process::ExitCode;

use anyhow::bail;
use serde_json::json;
use tokio_postgres::Client;

use crate::global::Global;

use super::describe;

fn db(e: tokio_postgres::Error) -> anyhow::Error {
    anyhow::anyhow!("the fleet database: {}", describe(&e))
}

#[derive(Debug, clap::Args)]
pub struct GrantArgs {
    /// The database role (it must exist).
    #[arg(value_name = "ROLE")]
    role: String,
    /// The host whose user the role is (its `[fleet] host` name).
    #[arg(long, value_name = "NAME", requires = "uid", conflicts_with = "admin")]
    host: Option<String>,
    /// The user's uid on that host.
    #[arg(long, value_name = "N", requires = "host")]
    uid: Option<u32>,
    /// Every group the user holds there, as `id -G USER` prints them
    /// (repeat, or separate with commas).
    #[arg(
        long = "gid",
        value_name = "N",
        value_delimiter = ',',
        requires = "host"
    )]
    gids: Vec<u32>,
    /// Make the role an admin: it sees every row of every host and may
    /// write them (the role a daemon ships as, unless it owns the schema).
    #[arg(long)]
    admin: bool,
}

#[derive(Debug, clap::Args)]
pub struct RevokeArgs {
    /// The database role.
    #[arg(value_name = "ROLE")]
    role: String,
    /// Only its mapping to this host (default: every mapping, and admin).
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
}

/// `role` quoted as an SQL identifier.
fn ident(role: &str) -> String {
    format!("\"{}\"", role.replace('"', "\"\""))
}

async fn role_exists(client: &Client, role: &str) -> anyhow::Result<()> {
    let found = client
        .query_opt("SELECT 1 FROM pg_roles WHERE rolname = $1", &[&role])
        .await
        .map_err(db)?;
    if found.is_none() {
        bail!(
            "no role {role} in the database: create it first (CREATE ROLE {} LOGIN PASSWORD '...')",
            ident(role)
        );
    }
    Ok(())
}

pub async fn grant(g: &Global, client: &mut Client, a: &GrantArgs) -> anyhow::Result<ExitCode> {
    role_exists(client, &a.role).await?;
    let role = ident(&a.role);
    let tx = client.transaction().await.map_err(db)?;
    tx.batch_execute(&format!("GRANT USAGE ON SCHEMA fsindex TO {role}"))
        .await
        .map_err(db)?;
    let out = if a.admin {
        tx.execute(
            "INSERT INTO fsindex.admins (role) VALUES ($1) ON CONFLICT DO NOTHING",
            &[&a.role],
        )
        .await
        .map_err(db)?;
        tx.batch_execute(&format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON fsindex.items, fsindex.folders, fsindex.hosts TO {role};
             GRANT SELECT ON fsindex.entries, fsindex.schema_version TO {role}"
        ))
        .await
        .map_err(db)?;
        // Schema 6's texts, which the daemons of hosts with content write.
        let texts: bool = tx
            .query_one("SELECT to_regclass('fsindex.texts') IS NOT NULL", &[])
            .await
            .map_err(db)?
            .get(0);
        if texts {
            tx.batch_execute(&format!(
                "GRANT SELECT, INSERT, UPDATE, DELETE ON fsindex.texts TO {role}"
            ))
            .await
            .map_err(db)?;
        }
        json!({ "role": a.role, "admin": true })
    } else {
        let (Some(host), Some(uid)) = (&a.host, a.uid) else {
            bail!("give --host NAME --uid N --gid N (the user's groups there), or --admin");
        };
        if a.gids.is_empty() {
            bail!("give the user's groups on {host} with --gid (as `id -G USER` prints them)");
        }
        let mut gids: Vec<i64> = a.gids.iter().map(|&g| i64::from(g)).collect();
        gids.sort_unstable();
        gids.dedup();
        tx.execute(
            "INSERT INTO fsindex.role_map (role, host, uid, gids) VALUES ($1, $2, $3, $4)
             ON CONFLICT (role, host) DO UPDATE SET uid = $3, gids = $4",
            &[&a.role, host, &i64::from(uid), &gids],
        )
        .await
        .map_err(db)?;
        tx.batch_execute(&format!(
            "GRANT SELECT ON fsindex.items, fsindex.folders, fsindex.entries, fsindex.hosts, \
             fsindex.schema_version TO {role}"
        ))
        .await
        .map_err(db)?;
        json!({ "role": a.role, "host": host, "uid": uid, "gids": gids })
    };
    tx.commit().await.map_err(db)?;
    if g.json {
        println!("{out}");
    } else if a.admin {
        println!("{}: admin (sees every host's rows)", a.role);
    } else {
        println!(
            "{}: uid {} on {} (groups {})",
            a.role,
            out["uid"],
            out["host"].as_str().unwrap_or_default(),
            out["gids"]
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn revoke(g: &Global, client: &mut Client, a: &RevokeArgs) -> anyhow::Result<ExitCode> {
    let tx = client.transaction().await.map_err(db)?;
    let mapped = tx
        .execute(
            "DELETE FROM fsindex.role_map WHERE role = $1 AND ($2::text IS NULL OR host = $2)",
            &[&a.role, &a.host],
        )
        .await
        .map_err(db)?;
    let admin = if a.host.is_none() {
        tx.execute("DELETE FROM fsindex.admins WHERE role = $1", &[&a.role])
            .await
            .map_err(db)?
    } else {
        0
    };
    tx.commit().await.map_err(db)?;
    if g.json {
        println!(
            "{}",
            json!({ "role": a.role, "mappings_removed": mapped, "admin_removed": admin > 0 })
        );
    } else {
        println!(
            "{}: {mapped} mapping(s) removed{}",
            a.role,
            if admin > 0 { ", no longer admin" } else { "" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn roles(g: &Global, client: &Client) -> anyhow::Result<ExitCode> {
    let rows = client
        .query(
            "SELECT role::text, host, uid, gids, false FROM fsindex.role_map
             UNION ALL SELECT role::text, NULL, NULL, NULL, true FROM fsindex.admins
             ORDER BY 1, 2",
            &[],
        )
        .await
        .map_err(db)?;
    for r in &rows {
        let role: &str = r.get(0);
        let admin: bool = r.get(4);
        if admin {
            if g.json {
                println!("{}", json!({ "role": role, "admin": true }));
            } else {
                println!("{role}  admin");
            }
            continue;
        }
        let (host, uid, gids): (&str, i64, Vec<i64>) = (r.get(1), r.get(2), r.get(3));
        if g.json {
            println!(
                "{}",
                json!({ "role": role, "host": host, "uid": uid, "gids": gids })
            );
        } else {
            let gids: Vec<String> = gids.iter().map(i64::to_string).collect();
            println!("{role}  {host}  uid {uid}  groups {}", gids.join(","));
        }
    }
    Ok(ExitCode::SUCCESS)
}
