//! claimrs: the claims seed's own acquire/status/release/renew behind a tiny
//! CLI, for TestSeedClaimInterop (../../seed_interop_test.go). Every record
//! is printed as serde_json of the seed's ClaimRecord (one line).
//!
//!   claimrs acquire ROOT KEY HOLDER TTL_MS PID METADATA_JSON [hold]
//!       TTL_MS 0 = PID-liveness claim; PID 0 = this process; METADATA_JSON
//!       "" = none. Prints "acquired <record>", "held <holder> <pid>" (exit 3)
//!       or "err <message>" (exit 1). With "hold", keeps the claim until
//!       stdin closes, then releases it and prints "released".
//!   claimrs status ROOT KEY      prints {"state":…,"record":…|null}
//!   claimrs read FILE            prints the record, or "err <message>" (exit 1)
//!   claimrs release ROOT KEY HOLDER
//!   claimrs renew ROOT KEY HOLDER TTL_MS   prints true or false
use claimrs::claims::*;
use std::io::Read;
use std::path::Path;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize| a.get(i).cloned().unwrap_or_else(|| panic!("missing argument {i}"));
    match arg(1).as_str() {
        "acquire" => {
            let root = Path::new(&a[2]).to_path_buf();
            let ttl: i64 = arg(5).parse().unwrap();
            let pid: u32 = arg(6).parse().unwrap();
            let meta = arg(7);
            let opts = AcquireOpts {
                pid: (pid != 0).then_some(pid),
                ttl_ms: (ttl != 0).then_some(ttl),
                reason: None,
                metadata: (!meta.is_empty()).then(|| serde_json::from_str(&meta).unwrap()),
                root: Some(root.clone()),
                events_dir: Some(root.clone()),
            };
            match acquire(&arg(3), &arg(4), opts) {
                AcquireOutcome::Acquired(rec) => {
                    println!("acquired {}", serde_json::to_string(&rec).unwrap());
                    if a.get(8).map(String::as_str) == Some("hold") {
                        let mut buf = Vec::new();
                        let _ = std::io::stdin().read_to_end(&mut buf);
                        release(&arg(3), &arg(4), Some(&root), Some(&root)).unwrap();
                        println!("released");
                    }
                }
                AcquireOutcome::HeldByOther { holder, pid, .. } => {
                    println!("held {holder} {pid}");
                    std::process::exit(3);
                }
                AcquireOutcome::Error(e) => {
                    println!("err {e}");
                    std::process::exit(1);
                }
            }
        }
        "status" => {
            let (state, rec) = status(&arg(3), Some(Path::new(&arg(2))));
            let v = serde_json::json!({"state": state.as_str(), "record": rec});
            println!("{v}");
        }
        "read" => match claimrs::read_claim(Path::new(&arg(2))) {
            Ok(rec) => println!("{}", serde_json::to_string(&rec).unwrap()),
            Err(e) => {
                println!("err {e}");
                std::process::exit(1);
            }
        },
        "release" => {
            let root = Path::new(&a[2]);
            if let Err(e) = release(&arg(3), &arg(4), Some(root), Some(root)) {
                println!("err {e}");
                std::process::exit(1);
            }
            println!("released");
        }
        "renew" => match renew(&arg(3), &arg(4), arg(5).parse().unwrap(), Some(Path::new(&arg(2)))) {
            Ok(b) => println!("{b}"),
            Err(e) => {
                println!("err {e}");
                std::process::exit(1);
            }
        },
        other => panic!("unknown action {other}"),
    }
}
