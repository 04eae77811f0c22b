use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::io::Read;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionLeaseOwner {
    pub schema_version: u32,
    pub session_id: String,
    pub lease_token: String,
    pub pid: u32,
    #[serde(default)]
    pub storage_writer_epoch: Option<u32>,
    pub daemon_namespace: Option<String>,
    pub build_fingerprint: Option<String>,
    pub protocol_version: Option<u32>,
    pub endpoint: Option<String>,
    pub executable_path: Option<PathBuf>,
    pub daemon_instance_id: Option<String>,
    pub acquired_at_ms: u64,
    pub last_seen_ms: u64,
}

fn main() {
    let mode = std::env::args().nth(1).unwrap();
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).unwrap();
    // decode: print "ok <re-encoded pretty>" or "err"
    match serde_json::from_slice::<SessionLeaseOwner>(&input) {
        Ok(o) => {
            if mode == "encode" {
                use std::io::Write;
                std::io::stdout().write_all(&serde_json::to_vec_pretty(&o).unwrap()).unwrap();
            } else {
                print!("ok");
            }
        }
        Err(e) => print!("err {e}"),
    }
}
