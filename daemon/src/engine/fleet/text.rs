//! What files say, shipped (`[fleet] content = true`, fleet schema 6):
//! each file's extracted text as `fsindex.texts`' two tsvectors, made by
//! [`crate::store::fleet_text`].
//!
//! A text that changes is a journal batch like any other change (the
//! writer journals the files whose content rows it writes or drops), so
//! [`put`] runs inside [`super::ship::apply`]'s transaction for the run's
//! ids: their texts are replaced (or dropped), and the host's `seq`
//! advances with them. `fsindex.hosts.content` says whether the host's
//! texts are there: a host that turns content on ships every text it has
//! ([`sync`]), one that turns it off drops them, and a reconcile (which
//! may follow a rebuilt index, whose ids are new) ships them again.

use std::pin::pin;
use std::sync::Arc;

use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Transaction};

use crate::store::Store;
use crate::store::fleet_text::{self, Tokenizer};

/// The fleet schema that holds texts.
pub const SCHEMA_VERSION: i32 = 6;

/// Files whose tsvectors are made and copied at a time.
const CHUNK: usize = 256;

/// Fails unless the fleet's schema holds texts.
pub(super) async fn check_schema(client: &Client) -> Result<(), String> {
    let v: Option<i32> = client
        .query_one("SELECT MAX(version) FROM fsindex.schema_version", &[])
        .await
        .map_err(|e| super::ship::describe(&e))?
        .get(0);
    match v {
        Some(v) if v >= SCHEMA_VERSION => Ok(()),
        v => Err(format!(
            "[fleet] content = true needs fleet schema {SCHEMA_VERSION} (the database has {}): run `fsctl fleet init`",
            v.unwrap_or(0)
        )),
    }
}

/// Whether the fleet's schema has texts (6 or later): a daemon with
/// `content = false` ships into older schemas too, and must not touch them.
async fn has_texts(c: &impl tokio_postgres::GenericClient) -> Result<bool, tokio_postgres::Error> {
    Ok(
        c.query_one("SELECT to_regclass('fsindex.texts') IS NOT NULL", &[])
            .await?
            .get(0),
    )
}

/// Replaces the host's texts of `ids` with what the index holds now (none
/// for a file with no text, or gone). Returns the texts written.
pub(super) async fn put(
    tx: &Transaction<'_>,
    store: &Arc<Store>,
    host: &str,
    ids: &[i64],
) -> Result<u64, tokio_postgres::Error> {
    tx.execute(
        "DELETE FROM fsindex.texts WHERE host = $1 AND id = ANY($2)",
        &[&host, &ids],
    )
    .await?;
    copy(tx, store, host, ids.to_vec()).await
}

/// Brings `fsindex.texts` to what `content` asks for this host, if
/// `fsindex.hosts.content` says otherwise: every text the index holds (on),
/// or none (off). Returns the texts written.
pub(super) async fn sync(
    client: &mut Client,
    store: &Arc<Store>,
    host: &str,
    content: bool,
) -> Result<u64, tokio_postgres::Error> {
    if !content && !has_texts(&*client).await? {
        return Ok(0);
    }
    let tx = client.transaction().await?;
    let held: Option<bool> = tx
        .query_opt(
            "SELECT content FROM fsindex.hosts WHERE host = $1 FOR UPDATE",
            &[&host],
        )
        .await?
        .map(|r| r.get(0));
    if held.is_none_or(|h| h == content) {
        tx.rollback().await?;
        return Ok(0);
    }
    tx.execute("DELETE FROM fsindex.texts WHERE host = $1", &[&host])
        .await?;
    let mut written = 0;
    if content {
        let st = store.clone();
        let ids = tokio::task::spawn_blocking(move || st.read(fleet_text::ids_with_text))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        written = copy(&tx, store, host, ids).await?;
    }
    tx.execute(
        "UPDATE fsindex.hosts SET content = $2 WHERE host = $1",
        &[&host, &content],
    )
    .await?;
    tx.commit().await?;
    Ok(written)
}

/// After a reconcile: the host's texts are to be shipped again (its ids
/// may all be new).
pub(super) async fn forget(tx: &Transaction<'_>, host: &str) -> Result<(), tokio_postgres::Error> {
    if !has_texts(tx).await? {
        return Ok(());
    }
    tx.execute("DELETE FROM fsindex.texts WHERE host = $1", &[&host])
        .await?;
    tx.execute(
        "UPDATE fsindex.hosts SET content = false WHERE host = $1",
        &[&host],
    )
    .await?;
    Ok(())
}

/// Copies the texts of `ids` (those that have one) into `fsindex.texts`.
async fn copy(
    tx: &Transaction<'_>,
    store: &Arc<Store>,
    host: &str,
    ids: Vec<i64>,
) -> Result<u64, tokio_postgres::Error> {
    if ids.is_empty() {
        return Ok(0);
    }
    tx.batch_execute(
        "CREATE TEMP TABLE IF NOT EXISTS staging_texts (id bigint, words text, stems text)
             ON COMMIT DELETE ROWS;
         DELETE FROM staging_texts",
    )
    .await?;
    for chunk in ids.chunks(CHUNK) {
        let st = store.clone();
        let chunk = chunk.to_vec();
        // Reading and tokenizing is CPU work: off the link's runtime.
        let rows = tokio::task::spawn_blocking(move || {
            let tokenizer = Tokenizer::new()?;
            let texts = st.read(|c| fleet_text::texts_of(c, &chunk))?;
            texts
                .into_iter()
                .map(|(id, lang, text)| {
                    Ok((
                        id,
                        tokenizer.words_tsvector(&text)?,
                        fleet_text::stems_tsvector(&text, &lang),
                    ))
                })
                .collect::<Result<Vec<_>, crate::Error>>()
        })
        .await;
        let rows = match rows {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => {
                tracing::warn!("fleet: reading texts to ship: {e}");
                continue;
            }
            Err(e) => {
                tracing::warn!("fleet: reading texts to ship: {e}");
                continue;
            }
        };
        let sink = tx
            .copy_in("COPY staging_texts (id, words, stems) FROM STDIN (FORMAT binary)")
            .await?;
        let mut writer = pin!(BinaryCopyInWriter::new(
            sink,
            &[Type::INT8, Type::TEXT, Type::TEXT]
        ));
        for (id, words, stems) in &rows {
            let values: [&(dyn ToSql + Sync); 3] = [id, words, stems];
            writer.as_mut().write(&values).await?;
        }
        writer.finish().await?;
    }
    let written = tx
        .execute(
            "INSERT INTO fsindex.texts (host, id, words, stems)
             SELECT $1, id, words::tsvector, stems::tsvector FROM staging_texts
             ON CONFLICT (host, id) DO UPDATE SET words = EXCLUDED.words, stems = EXCLUDED.stems",
            &[&host],
        )
        .await?;
    tx.execute("DELETE FROM staging_texts", &[]).await?;
    Ok(written)
}
