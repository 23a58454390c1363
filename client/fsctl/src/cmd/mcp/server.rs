//! The MCP surface: one thin method per tool (name, description,
//! annotations, schemas), each handing its arguments to the module that
//! does the work and its answer back as structured content plus text.

use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use super::browse::{self, *};
use super::find::{self, *};
use super::index::{Ctx, finish};
use super::plan::{self, PlanAnswer, PlanParams};

#[derive(Clone)]
pub struct FsIndexServer {
    ctx: Arc<Ctx>,
}

impl FsIndexServer {
    pub fn new(ctx: Ctx) -> FsIndexServer {
        FsIndexServer { ctx: Arc::new(ctx) }
    }
}

#[tool_router]
impl FsIndexServer {
    #[tool(
        description = "The directories this server may read; every path given to a tool must be at or under one.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<AllowedDirectories>()
    )]
    async fn list_allowed_directories(&self) -> CallToolResult {
        finish(browse::list_allowed_directories(&self.ctx))
    }

    #[tool(
        description = "Find files and folders in the index in milliseconds (no disk walk). `query` takes the full query language; the other fields are the same filters spelled out. Paged: pass nextCursor back as `cursor`.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FoundPage>()
    )]
    async fn find_files(&self, Parameters(p): Parameters<FindParams>) -> CallToolResult {
        finish(find::find_files(&self.ctx, p).await)
    }

    #[tool(
        description = "Recursively find files and folders whose path relative to `path` matches a glob ('*.ext' in the folder itself, '**/*.ext' at any depth), answered from the index. Returns full paths.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<GlobPage>()
    )]
    async fn search_files(&self, Parameters(p): Parameters<GlobParams>) -> CallToolResult {
        finish(find::search_files(&self.ctx, p).await)
    }

    #[tool(
        description = "Metadata of one file or folder: size, times, permissions, type, plus kind, MIME type, text encoding and line count, and du figures for folders.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FileInfo>()
    )]
    async fn get_file_info(&self, Parameters(p): Parameters<PathParams>) -> CallToolResult {
        finish(browse::get_file_info(&self.ctx, p).await)
    }

    #[tool(
        description = "A folder's children, marked [DIR] or [FILE], from the index. Paged for large folders.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<Listing>()
    )]
    async fn list_directory(&self, Parameters(p): Parameters<ListParams>) -> CallToolResult {
        finish(browse::list_directory(&self.ctx, p).await)
    }

    #[tool(
        description = "A folder's children with sizes: files their size, folders the size of everything in them (as du), with totals. sortBy name or size.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SizedListing>()
    )]
    async fn list_directory_with_sizes(
        &self,
        Parameters(p): Parameters<SizesParams>,
    ) -> CallToolResult {
        finish(browse::list_directory_with_sizes(&self.ctx, p).await)
    }

    #[tool(
        description = "A recursive tree of a folder (name, type, children), shallowest levels first, bounded by maxDepth and maxEntries; folders cut short say how many entries they hold beyond.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<TreeAnswer>()
    )]
    async fn directory_tree(&self, Parameters(p): Parameters<TreeParams>) -> CallToolResult {
        finish(browse::directory_tree(&self.ctx, p).await)
    }

    #[tool(
        description = "Disk usage of a folder and its largest entries, equal to GNU du (allocated bytes as du -B1, apparent as du -b, hard links once), from the index's aggregates: instant at any size.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DuAnswer>()
    )]
    async fn disk_usage(&self, Parameters(p): Parameters<DuParams>) -> CallToolResult {
        finish(browse::disk_usage(&self.ctx, p).await)
    }

    #[tool(
        description = "Groups of byte-identical files (BLAKE3; hard links are one copy), largest reclaimable space first. Paged.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<DupesAnswer>()
    )]
    async fn find_duplicates(&self, Parameters(p): Parameters<DupesParams>) -> CallToolResult {
        finish(find::find_duplicates(&self.ctx, p).await)
    }

    #[tool(
        description = "A condensed outline of a tree that fits a token budget (bytes / 4, never exceeded): folders with size, file count and dominant kinds, alike names collapsed into patterns, recently active areas marked [recent]. Start here to understand a large tree.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<MapAnswer>()
    )]
    async fn fs_map(&self, Parameters(p): Parameters<MapParams>) -> CallToolResult {
        finish(browse::fs_map(&self.ctx, p).await)
    }

    #[tool(
        description = "Counts and sizes of the files matching a query, per extension, kind, first-level folder, year or month: answers 'how many PDFs per year' in one call.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<CountAnswer>()
    )]
    async fn count_files(&self, Parameters(p): Parameters<CountParams>) -> CallToolResult {
        finish(find::count_files(&self.ctx, p).await)
    }

    #[tool(
        description = "Files modified lately, newest first (folders left out).",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<RecentAnswer>()
    )]
    async fn recent_files(&self, Parameters(p): Parameters<RecentParams>) -> CallToolResult {
        finish(find::recent_files(&self.ctx, p).await)
    }

    #[tool(
        description = "One line per file of a project folder (relativePath, kind, size, mtime), sorted by path, for an agent's context. Paged.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ManifestAnswer>()
    )]
    async fn folder_manifest(&self, Parameters(p): Parameters<ManifestParams>) -> CallToolResult {
        finish(find::folder_manifest(&self.ctx, p).await)
    }

    #[tool(
        description = "Decoded text of a file (BOM, UTF-8, or the encoding chardetng detects), whole or by head / tail / startLine-endLine, optionally numbered, capped at maxBytes. Binary files are refused with their kind and size.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReadAnswer>()
    )]
    async fn read_text_file(&self, Parameters(p): Parameters<ReadParams>) -> CallToolResult {
        finish(browse::read_text_file(&self.ctx, p).await)
    }

    #[tool(
        description = "Lines matching a regex (or literal text) in files' content: the index selects the candidate files (text and code, by kind and `include`, up to 8 MiB) and they are read in parallel, stopping at maxResults or a 10 s time budget, and the answer says where it stopped. To find which documents (PDF, Office, mail included) mention words, in folders with content search on, find_files with query content:WORD or content:\"a phrase\" answers from the full-text index at once.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ContentAnswer>()
    )]
    async fn search_file_content(
        &self,
        Parameters(p): Parameters<ContentParams>,
    ) -> CallToolResult {
        finish(find::search_file_content(&self.ctx, p).await)
    }

    #[tool(
        description = "Simulates a reorganisation without touching anything: missing sources, destinations that collide with each other or with existing files, moves into their own subtree, identical files among the moved ones, and the resulting tree's top levels.",
        annotations(read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<PlanAnswer>()
    )]
    async fn check_move_plan(&self, Parameters(p): Parameters<PlanParams>) -> CallToolResult {
        finish(plan::check_move_plan(&self.ctx, p).await)
    }
}

#[tool_handler(
    name = "fsindex",
    instructions = "Read-only tools over fsindex, a live index of the user's files. Paths must be under the allowed directories (list_allowed_directories). Prefer fs_map to get the lie of a tree, find_files / count_files / disk_usage / find_duplicates over walking, and read_text_file to read. Long lists are paged: pass nextCursor back as cursor."
)]
impl ServerHandler for FsIndexServer {}
