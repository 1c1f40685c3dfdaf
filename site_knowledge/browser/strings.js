// The box's fixed strings in the page's language (<html lang>, its primary subtag): English,
// German, Spanish, French, Portuguese, Chinese, Japanese and Korean; any other language gets
// English. `{name}` marks a value filled in by `say`.

export const STRINGS = {
  en: {
    askSite: "Ask this site", question: "Your question", ask: "Ask", close: "Close",
    sources: "Sources", consulted: "Sources consulted", answeredBy: "Answered by {by}.",
    copy: "Copy", copied: "Copied.", busy: "The answer server is busy: you are number {n} in line.",
    ungrounded: "Part of this answer was removed: the site does not support it.",
    forgotten: "Done: the earlier questions and answers are forgotten.",
    refusal: "That isn't covered on this site ({site}), so I can't answer it from here.",
    noModel: "No language model is available right now, so here are the passages from this site that best match your question.",
  },
  de: {
    askSite: "Diese Website fragen", question: "Ihre Frage", ask: "Fragen", close: "Schließen",
    sources: "Quellen", consulted: "Gelesene Quellen", answeredBy: "Beantwortet von {by}.",
    copy: "Kopieren", copied: "Kopiert.", busy: "Der Antwortserver ist ausgelastet: Sie sind Nummer {n} in der Warteschlange.",
    ungrounded: "Ein Teil dieser Antwort wurde entfernt: Die Website stützt ihn nicht.",
    forgotten: "Erledigt: Die früheren Fragen und Antworten sind vergessen.",
    refusal: "Das wird auf dieser Website ({site}) nicht behandelt, daher kann ich es hier nicht beantworten.",
    noModel: "Gerade ist kein Sprachmodell verfügbar; hier sind die Abschnitte dieser Website, die am besten zu Ihrer Frage passen.",
  },
  es: {
    askSite: "Pregunta a este sitio", question: "Tu pregunta", ask: "Preguntar", close: "Cerrar",
    sources: "Fuentes", consulted: "Fuentes consultadas", answeredBy: "Respondido por {by}.",
    copy: "Copiar", copied: "Copiado.", busy: "El servidor de respuestas está ocupado: eres el número {n} en la cola.",
    ungrounded: "Se quitó parte de esta respuesta: el sitio no la respalda.",
    forgotten: "Hecho: las preguntas y respuestas anteriores se han olvidado.",
    refusal: "Eso no se trata en este sitio ({site}), así que no puedo responderlo desde aquí.",
    noModel: "No hay ningún modelo de lenguaje disponible ahora; estos son los pasajes del sitio que mejor responden a tu pregunta.",
  },
  fr: {
    askSite: "Interroger ce site", question: "Votre question", ask: "Demander", close: "Fermer",
    sources: "Sources", consulted: "Sources consultées", answeredBy: "Réponse de {by}.",
    copy: "Copier", copied: "Copié.", busy: "Le serveur de réponses est occupé : vous êtes numéro {n} dans la file.",
    ungrounded: "Une partie de cette réponse a été retirée : le site ne l’appuie pas.",
    forgotten: "C’est fait : les questions et réponses précédentes sont oubliées.",
    refusal: "Ce sujet n’est pas traité sur ce site ({site}), je ne peux donc pas y répondre ici.",
    noModel: "Aucun modèle de langue n’est disponible pour l’instant ; voici les passages du site qui correspondent le mieux à votre question.",
  },
  pt: {
    askSite: "Pergunte a este site", question: "Sua pergunta", ask: "Perguntar", close: "Fechar",
    sources: "Fontes", consulted: "Fontes consultadas", answeredBy: "Respondido por {by}.",
    copy: "Copiar", copied: "Copiado.", busy: "O servidor de respostas está ocupado: você é o número {n} na fila.",
    ungrounded: "Parte desta resposta foi removida: o site não a sustenta.",
    forgotten: "Pronto: as perguntas e respostas anteriores foram esquecidas.",
    refusal: "Isso não é tratado neste site ({site}), então não posso responder daqui.",
    noModel: "Nenhum modelo de linguagem está disponível agora; estes são os trechos do site que melhor correspondem à sua pergunta.",
  },
  zh: {
    askSite: "向本站提问", question: "你的问题", ask: "提问", close: "关闭",
    sources: "来源", consulted: "参考的来源", answeredBy: "回答者：{by}。",
    copy: "复制", copied: "已复制。", busy: "回答服务器正忙：你排在第 {n} 位。",
    ungrounded: "此回答的一部分已被删除：本站内容不支持它。",
    forgotten: "完成：之前的问题和回答已被忘记。",
    refusal: "本站（{site}）没有涉及这个内容，所以我无法在这里回答。",
    noModel: "目前没有可用的语言模型，以下是本站与你的问题最匹配的段落。",
  },
  ja: {
    askSite: "このサイトに質問", question: "質問", ask: "質問する", close: "閉じる",
    sources: "出典", consulted: "参照した出典", answeredBy: "回答：{by}。",
    copy: "コピー", copied: "コピーしました。", busy: "回答サーバーが混雑しています：{n} 番目の順番です。",
    ungrounded: "この回答の一部を削除しました：サイトの内容で裏付けられません。",
    forgotten: "完了：これまでの質問と回答を忘れました。",
    refusal: "その内容はこのサイト（{site}）では扱っていないため、ここではお答えできません。",
    noModel: "現在利用できる言語モデルがないため、質問に最もよく合うこのサイトの箇所を示します。",
  },
  ko: {
    askSite: "이 사이트에 질문하기", question: "질문", ask: "질문하기", close: "닫기",
    sources: "출처", consulted: "참고한 출처", answeredBy: "답변: {by}.",
    copy: "복사", copied: "복사했습니다.", busy: "답변 서버가 바쁩니다: 대기 순서는 {n}번입니다.",
    ungrounded: "이 답변의 일부를 삭제했습니다: 사이트 내용이 뒷받침하지 않습니다.",
    forgotten: "완료: 이전 질문과 답변을 잊었습니다.",
    refusal: "이 사이트({site})에서 다루지 않는 내용이라 여기서는 답할 수 없습니다.",
    noModel: "지금은 사용할 수 있는 언어 모델이 없어, 질문과 가장 잘 맞는 이 사이트의 구절을 보여 드립니다.",
  },
};

/** The strings for a page language such as "pt-BR" or "zh-Hant" (English when there are none). */
export function stringsFor(lang) {
  const primary = String(lang || "").toLowerCase().split(/[-_]/)[0];
  return STRINGS[primary] || STRINGS.en;
}

/** The string `key` in the page's language, its `{name}` marks filled from `values`. */
export function say(key, values = {}, lang = globalThis.document?.documentElement.lang) {
  return stringsFor(lang)[key].replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
}

const TAG = /^(?=.{2,35}$)[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/;

/** The page's <html lang> when it is a language tag (the gateway takes no other), else null. */
export function pageLanguage(lang = globalThis.document?.documentElement.lang) {
  return lang && TAG.test(lang) ? lang : null;
}

/** Whether the page is in a language whose strings are English (the artifact's own texts). */
export function speaksEnglish(lang = globalThis.document?.documentElement.lang) {
  return stringsFor(lang) === STRINGS.en;
}
