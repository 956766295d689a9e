//! docs/policies.md says what the rules parser does: every `rules` block in it parses, each
//! example means what the text around it says, and the grammar's edge cases it states hold.

use cuga_flo::reason::rules::{RuleAction, parse_rules};
use cuga_flo::vocab::HookAction;
use serde_json::json;

fn doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policies.md")).unwrap()
}

#[test]
fn every_rules_block_of_the_doc_parses() {
    let rules = parse_rules(&doc()).unwrap_or_else(|e| panic!("docs/policies.md: {e:?}"));
    // the blocks of the doc: hook (2), gateway (2), every action (6), set (1), FEEL (1);
    // the ````markdown example holds a `rules` fence inside another fence: prose
    assert_eq!(rules.len(), 12, "{rules:#?}");
    // comments and blank lines are not rules
    assert!(rules.iter().all(|r| r.text.starts_with("when ")));

    let hook = &rules[0];
    assert_eq!(
        hook.action,
        RuleAction::Hook {
            action: HookAction::Terminate,
            args: vec![]
        }
    );
    assert_eq!(hook.set["decision"], json!("rejected"));
    assert_eq!(hook.because.as_deref(), Some("the requester is blocked"));
    // the catch-all
    assert_eq!(rules[1].condition.source(), "true");
    assert!(rules[1].condition.eval(&serde_json::Map::new()).is_true());

    assert_eq!(
        rules[3].action,
        RuleAction::Take(vec!["Flow_technical".into()])
    );
    assert!(rules[3].because.is_none());

    // every hook action, with its node ids
    let actions: Vec<(HookAction, usize)> = rules[4..10]
        .iter()
        .map(|r| match &r.action {
            RuleAction::Hook { action, args } => (*action, args.len()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        actions,
        [
            (HookAction::SkipNode, 0),
            (HookAction::SkipTo, 1),
            (HookAction::RemoveNode, 1),
            (HookAction::SwapNodes, 2),
            (HookAction::AddNode, 1),
            (HookAction::Terminate, 0),
        ]
    );

    // several assignments, commas inside JSON, escaped quotes in the reason
    let set = &rules[10];
    assert_eq!(
        set.set["review"],
        json!({"level": 2, "by": ["finance", "legal"]})
    );
    assert_eq!(set.set["flagged"], json!(true));
    assert_eq!(set.because.as_deref(), Some("over \"10 000\": two reviews"));

    // FEEL, and two flows
    let feel = &rules[11];
    assert_eq!(
        feel.action,
        RuleAction::Take(vec!["Flow_vat".into(), "Flow_review".into()])
    );
    let vars = json!({"amount": 150, "region": "EU"});
    assert!(feel.condition.eval(vars.as_object().unwrap()).is_true());
}

#[test]
fn the_grammar_the_doc_states_holds() {
    // a `#` later in a line is not a comment
    assert!(parse_rules("```rules\nwhen true then continue # note\n```\n").is_err());
    // other blocks are prose; `~~~` fences work; a longer closing fence closes
    let r = parse_rules("```json\nwhen nonsense\n```\n~~~~rules\nwhen true then continue\n~~~~~\n")
        .unwrap();
    assert_eq!(r.len(), 1);
    // an unclosed rules block is an error
    assert!(parse_rules("```rules\nwhen true then continue\n").is_err());
    // `because` ends the rule: set after it is not read as set
    assert!(
        parse_rules("```rules\nwhen true then continue because \"x\" set a = 1\n```\n").is_err()
    );
    // a gateway rule cannot set
    assert!(parse_rules("```rules\nwhen true then take F set a = 1\n```\n").is_err());
    // `then` inside quotes is part of the condition
    let r = parse_rules("```rules\nwhen ${s} == \"now then\" then continue\n```\n").unwrap();
    assert_eq!(r[0].condition.source(), "${s} == \"now then\"");
    // without because, the reason is the rule as written (tested through the answer's
    // reason in the unit tests); variable names are letters, digits, `_`, `-`
    assert!(parse_rules("```rules\nwhen true then continue set a.b = 1\n```\n").is_err());
    assert!(parse_rules("```rules\nwhen true then continue set a-b_2 = 1\n```\n").is_ok());
}
