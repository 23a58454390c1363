//! `fsctl fleet init`: creates the fleet's schema in PostgreSQL, or brings
//! it up to this version. Migrations are `migrations/fleet/NNNN_name.sql`,
//! append-only, each applied once in one transaction and recorded in
//! `fsindex.schema_version`, like the local index's; a schema newer than
//! this fsctl knows is refused and left untouched.

use std::process::ExitCode;

use serde_json::json;

use crate::global::Global;

use super::describe;

/// The fleet's migrations, in order. Append only; the daemon's
/// `engine::fleet::SCHEMA_VERSION` names the oldest the daemons need (4
/// changed only `fsindex.search`, which fsctl calls; 5 made a partition
/// per host, which the daemons load; 7 lets them load it in parts, and
/// they load into 5 and 6 as before).
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        include_str!("../../../../../migrations/fleet/0001_fleet.sql"),
    ),
    (
        2,
        include_str!("../../../../../migrations/fleet/0002_visibility.sql"),
    ),
    (
        3,
        include_str!("../../../../../migrations/fleet/0003_folders.sql"),
    ),
    (
        4,
        include_str!("../../../../../migrations/fleet/0004_search.sql"),
    ),
    (
        5,
        include_str!("../../../../../migrations/fleet/0005_partitions.sql"),
    ),
    (
        6,
        include_str!("../../../../../migrations/fleet/0006_content.sql"),
    ),
    (
        7,
        include_str!("../../../../../migrations/fleet/0007_load_parts.sql"),
    ),
];

pub async fn run(g: &Global, mut client: tokio_postgres::Client) -> anyhow::Result<ExitCode> {
    let err = |e: tokio_postgres::Error| anyhow::anyhow!("fleet init: {}", describe(&e));
    client
        .batch_execute(
            "CREATE SCHEMA IF NOT EXISTS fsindex;
             CREATE TABLE IF NOT EXISTS fsindex.schema_version (
                 version    integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .await
        .map_err(err)?;
    let known = MIGRATIONS[MIGRATIONS.len() - 1].0;
    let mut applied = Vec::new();
    loop {
        let tx = client.transaction().await.map_err(err)?;
        // One init at a time: a second waits, then finds nothing to do.
        tx.batch_execute("LOCK TABLE fsindex.schema_version IN EXCLUSIVE MODE")
            .await
            .map_err(err)?;
        let current: i32 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM fsindex.schema_version",
                &[],
            )
            .await
            .map_err(err)?
            .get(0);
        if current > known {
            anyhow::bail!(
                "fleet init: the database's fleet schema is at version {current}, newer than this fsctl knows ({known}); left untouched"
            );
        }
        let Some(&(version, sql)) = MIGRATIONS.iter().find(|(v, _)| *v > current) else {
            tx.commit().await.map_err(err)?;
            break;
        };
        tx.batch_execute(sql).await.map_err(err)?;
        tx.execute(
            "INSERT INTO fsindex.schema_version (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(err)?;
        tx.commit().await.map_err(err)?;
        applied.push(version);
    }
    if g.json {
        println!("{}", json!({ "version": known, "applied": applied }));
    } else if applied.is_empty() {
        println!("fleet schema at version {known}: nothing to do");
    } else {
        println!(
            "fleet schema at version {known} (applied {})",
            applied
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
