use seedrs::lease::*;
use std::io::Read;
use std::path::Path;

fn hold() {
    let mut buf = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut buf);
}

/// The owner identity of `acquire` and `run`: INSTANCE and EPOCH.
fn owner_ctx(instance: &str, epoch: &str) -> SessionLeaseOwnerContext {
    SessionLeaseOwnerContext {
        storage_writer_epoch: Some(epoch.parse().unwrap()),
        daemon_instance_id: Some(instance.to_string()),
        build_fingerprint: Some("seed".into()),
        ..SessionLeaseOwnerContext::default()
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let root = Path::new(&a[2]);
    let sid = a[3].parse().unwrap();
    match a[1].as_str() {
        "acquire" => {
            let ctx = owner_ctx(&a[4], &a[5]);
            match acquire_session_lease(root, sid, &ctx) {
                Ok(g) => { println!("acquired {}", g.owner().lease_token); hold(); }
                Err(e) => { println!("err {e}"); std::process::exit(1); }
            }
        }
        "run" => {
            // The seed's own code doing what `leasewrap session run` does,
            // for bench/lwbench: register the owner, run the command, wait
            // for it, release (the guard's drop), exit with its code.
            let ctx = owner_ctx(&a[4], &a[5]);
            match acquire_session_lease(root, sid, &ctx) {
                Ok(g) => {
                    let st = std::process::Command::new(&a[6]).args(&a[7..]).status();
                    drop(g);
                    std::process::exit(st.ok().and_then(|s| s.code()).unwrap_or(127));
                }
                Err(e) => { println!("err {e}"); std::process::exit(1); }
            }
        }
        "maintain" => match acquire_session_maintenance_guard(root, sid) {
            Ok(_g) => { println!("maintaining"); hold(); }
            Err(e) => { println!("err {e}"); std::process::exit(1); }
        },
        "owners" => {
            let obs = session_owner_observations(root, sid).unwrap();
            println!("{}", serde_json::to_string(&obs).unwrap());
        }
        _ => panic!("action"),
    }
}
